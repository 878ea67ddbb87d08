//! The contracts queue side by side with River (`riverqueue` 0.5.0, River's Rust client: the queue a
//! Rust team would pick instead), on the same PostgreSQL cluster and at the same SQLite durability.
//!
//! Workloads, identical for both libraries (a contract with no pinned files is River's job with empty
//! arguments; a worker completes what it claims at once):
//!
//! * **enqueue**: 16 producers insert `N` jobs, nobody works;
//! * **pairs, W workers**: 16 producers insert `N` jobs while W workers (16, then 64) claim and
//!   complete them; pairs per second from the first insert to the last completion, and the
//!   claim-to-complete latency (from the moment the worker holds the job to the moment its
//!   completion is durable and answered: our fulfil's answer, River's completion event, which River
//!   sends once the completion is stored) at p50 and p99.
//!
//! Each case runs [`ROUNDS`] times, the two libraries alternating, each run on a new database (a new
//! PostgreSQL database, a new SQLite file); the medians and their ratio (ours / River) are printed.
//! On PostgreSQL the server's own counters say what each library asked of it: transactions
//! (`pg_stat_database.xact_commit`) and WAL flushes (`pg_stat_wal.wal_sync`) per job.
//!
//! Each library runs with its defaults (our pool of `PgOptions::default()`, SQLx's pool for River),
//! River with its fetch cooldown and fetch poll interval at their documented minimum (1 ms). SQLite
//! runs in WAL mode at `synchronous = FULL` (River's setting: SQLx's default) and at `NORMAL` (our
//! default) for both.
//!
//! `cargo bench -p benches --bench contracts_vs_river`, with `SHIFTWORK_BENCH_POSTGRES_URL` (or else
//! `SHIFTWORK_TEST_POSTGRES_URL`) naming a PostgreSQL server whose databases the bench may create and
//! drop; without one the PostgreSQL half is skipped. `SHIFTWORK_BENCH_JOBS` sets `N` (default 5,000;
//! `SHIFTWORK_BENCH_QUICK=1` divides it by ten), `SHIFTWORK_BENCH_ONLY=pg` or `=sqlite` runs one half.
//! A test run (`cargo test --all-targets`) runs both libraries once on a few SQLite jobs.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use riverqueue::database::IntoDatabase;
use riverqueue::sqlx::postgres::PgPoolOptions;
use riverqueue::sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use riverqueue::{
    Client, EventKind, Job, JobArgs, QueueConfig, SubscribeConfig, WorkContext, WorkOutcome, Workers,
};
use serde::{Deserialize, Serialize};
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::wait::Cancel;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, PgOptions, PgStore, RefusalCode,
    SqliteOptions, SqliteStore, Store, Synchronous,
};
use shiftwork_seams::{MemFs, OsFs, SystemClock};

/// Producers inserting at once.
const PRODUCERS: usize = 16;
/// Runs of each case per library.
const ROUNDS: usize = 3;

/// River's job: no arguments, completed at once.
#[derive(Clone, Debug, Deserialize, Serialize, JobArgs)]
#[river(kind = "bench_pair")]
struct Pair {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lib {
    Ours,
    River,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    Enqueue,
    Pairs(usize),
}

impl Workload {
    fn label(self) -> String {
        match self {
            Workload::Enqueue => format!("enqueue ({PRODUCERS} producers)"),
            Workload::Pairs(w) => format!("enqueue+claim+complete, {w} workers"),
        }
    }
}

/// Where a run stores its jobs.
#[derive(Clone)]
enum Backend {
    /// A PostgreSQL server (the URL of any database on it).
    Postgres(String),
    /// A SQLite file in WAL mode at this `synchronous`.
    Sqlite(Synchronous),
}

/// One run's figures.
#[derive(Debug, Default, Clone)]
struct Figures {
    per_sec: f64,
    latencies: Vec<Duration>,
    /// Server transactions per job (PostgreSQL only).
    xacts: Option<f64>,
    /// WAL flushes per job (PostgreSQL only).
    wal_syncs: Option<f64>,
}

fn main() {
    if !common::benching() {
        smoke();
        return;
    }
    let n = std::env::var("SHIFTWORK_BENCH_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000)
        / common::quick();
    let only = std::env::var("SHIFTWORK_BENCH_ONLY").unwrap_or_default();
    println!(
        "contracts vs riverqueue 0.5.0 on {} ({} CPUs): {n} jobs a run, {ROUNDS} alternating runs a case, medians",
        common::cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    let rt = runtime();
    let mut backends: Vec<(String, Backend)> = Vec::new();
    if only != "sqlite" {
        match std::env::var("SHIFTWORK_BENCH_POSTGRES_URL")
            .or_else(|_| std::env::var("SHIFTWORK_TEST_POSTGRES_URL"))
        {
            Ok(url) => {
                let settings = server_settings(&url);
                backends.push((format!("PostgreSQL ({settings})"), Backend::Postgres(url)));
            }
            Err(_) => println!(
                "PostgreSQL: skipped (neither SHIFTWORK_BENCH_POSTGRES_URL nor SHIFTWORK_TEST_POSTGRES_URL is set)"
            ),
        }
    }
    if only != "pg" {
        backends.push((
            String::from("SQLite, synchronous FULL"),
            Backend::Sqlite(Synchronous::Full),
        ));
        backends.push((
            String::from("SQLite, synchronous NORMAL"),
            Backend::Sqlite(Synchronous::Normal),
        ));
    }
    println!(
        "| store | workload | library | jobs/s | p50 claim→complete | p99 | transactions/job | WAL flushes/job | ours / River |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, backend) in &backends {
        for workload in [Workload::Enqueue, Workload::Pairs(16), Workload::Pairs(64)] {
            let mut runs: HashMap<&str, Vec<Figures>> = HashMap::new();
            for round in 0..ROUNDS {
                // Alternate which library goes first.
                let order = if round % 2 == 0 {
                    [Lib::Ours, Lib::River]
                } else {
                    [Lib::River, Lib::Ours]
                };
                for lib in order {
                    let f = run(&rt, lib, backend, workload, n, round);
                    runs.entry(lib_name(lib)).or_default().push(f);
                }
            }
            let ours = summary(&runs["ours"]);
            let river = summary(&runs["River"]);
            for (lib, s) in [("shiftwork-contracts", &ours), ("riverqueue 0.5.0", &river)] {
                let ratio = if lib == "shiftwork-contracts" {
                    format!("**{:.2}×**", ours.per_sec / river.per_sec)
                } else {
                    String::new()
                };
                println!(
                    "| {name} | {} | {lib} | {:.0} ({}) | {} | {} | {} | {} | {ratio} |",
                    workload.label(),
                    s.per_sec,
                    s.spread,
                    s.p50.map_or(String::from("—"), fmt_ms),
                    s.p99.map_or(String::from("—"), fmt_ms),
                    s.xacts.map_or(String::from("—"), |x| format!("{x:.2}")),
                    s.wal_syncs.map_or(String::from("—"), |x| format!("{x:.2}")),
                );
            }
        }
    }
}

fn lib_name(lib: Lib) -> &'static str {
    match lib {
        Lib::Ours => "ours",
        Lib::River => "River",
    }
}

fn fmt_ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

struct Summary {
    per_sec: f64,
    spread: String,
    p50: Option<Duration>,
    p99: Option<Duration>,
    xacts: Option<f64>,
    wal_syncs: Option<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    Some(sorted[i])
}

/// The medians of a case's runs: the rate (with the runs' range), the percentiles of each run's
/// latencies (median over runs), the server counters.
fn summary(runs: &[Figures]) -> Summary {
    let rates: Vec<f64> = runs.iter().map(|f| f.per_sec).collect();
    let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rates.iter().copied().fold(0.0, f64::max);
    let pct = |p: f64| {
        let mut per_run: Vec<f64> = runs
            .iter()
            .filter_map(|f| {
                let mut l = f.latencies.clone();
                l.sort();
                percentile(&l, p).map(|d| d.as_secs_f64())
            })
            .collect();
        if per_run.is_empty() {
            return None;
        }
        per_run.sort_by(|a, b| a.partial_cmp(b).unwrap());
        Some(Duration::from_secs_f64(per_run[per_run.len() / 2]))
    };
    let counter = |get: fn(&Figures) -> Option<f64>| {
        let v: Vec<f64> = runs.iter().filter_map(get).collect();
        (!v.is_empty()).then(|| median(v))
    };
    Summary {
        per_sec: median(rates),
        spread: format!("{lo:.0}–{hi:.0}"),
        p50: pct(0.50),
        p99: pct(0.99),
        xacts: counter(|f| f.xacts),
        wal_syncs: counter(|f| f.wal_syncs),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One run of `lib` on a new database of `backend`.
fn run(
    rt: &tokio::runtime::Runtime,
    lib: Lib,
    backend: &Backend,
    workload: Workload,
    n: usize,
    round: usize,
) -> Figures {
    match backend {
        Backend::Postgres(url) => {
            let db = format!(
                "{}_bench_{}_{round}",
                lib_name(lib).to_lowercase(),
                std::process::id()
            );
            let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
            admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
                .unwrap();
            admin.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
            let db_url = with_database(url, &db);
            let mut f = match lib {
                Lib::Ours => {
                    let store = Arc::new(PgStore::connect(&db_url, PgOptions::default()).unwrap());
                    let before = counters(&mut admin, &db);
                    let mut f = ours(store, workload, n);
                    // The store's connections closed (its listening thread stops within a second of
                    // the last wait), so the server has every backend's counters.
                    std::thread::sleep(Duration::from_millis(1500));
                    let after = counters(&mut admin, &db);
                    f.xacts = Some((after.0 - before.0) as f64 / n as f64);
                    f.wal_syncs = Some((after.1 - before.1) as f64 / n as f64);
                    f
                }
                Lib::River => {
                    // The synchronous client of the counters runs outside the runtime.
                    let pool = rt.block_on(async {
                        let pool = PgPoolOptions::new().connect(&db_url).await.unwrap();
                        riverqueue::migrate::PostgresMigrator::new(pool.clone())
                            .migrate_up()
                            .await
                            .unwrap();
                        pool
                    });
                    let before = counters(&mut admin, &db);
                    let mut f = rt.block_on(async {
                        let f = river(pool.clone(), workload, n).await;
                        pool.close().await;
                        f
                    });
                    std::thread::sleep(Duration::from_millis(1500));
                    let after = counters(&mut admin, &db);
                    f.xacts = Some((after.0 - before.0) as f64 / n as f64);
                    f.wal_syncs = Some((after.1 - before.1) as f64 / n as f64);
                    f
                }
            };
            admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
                .unwrap();
            f.latencies.shrink_to_fit();
            f
        }
        Backend::Sqlite(sync) => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("queue.db");
            match lib {
                Lib::Ours => ours(sqlite_store(&path, *sync), workload, n),
                Lib::River => rt.block_on(async {
                    let pool = river_sqlite_pool(&path, *sync).await;
                    let f = river(pool.clone(), workload, n).await;
                    pool.close().await;
                    f
                }),
            }
        }
    }
}

fn sqlite_store(path: &Path, sync: Synchronous) -> Arc<dyn Store> {
    let options = SqliteOptions {
        synchronous: sync,
        ..SqliteOptions::default()
    };
    Arc::new(SqliteStore::open(path, options, Arc::new(SystemClock::new()), &OsFs).unwrap())
}

async fn river_sqlite_pool(path: &Path, sync: Synchronous) -> riverqueue::sqlx::SqlitePool {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .unwrap()
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(5))
        .synchronous(match sync {
            Synchronous::Full => SqliteSynchronous::Full,
            Synchronous::Normal => SqliteSynchronous::Normal,
        });
    let pool = SqlitePoolOptions::new().connect_with(options).await.unwrap();
    riverqueue::migrate::SqliteMigrator::new(pool.clone())
        .migrate_up()
        .await
        .unwrap();
    pool
}

/// `url` with its database replaced by `db` (`postgresql://user@host/<db>?params`).
fn with_database(url: &str, db: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (authority, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let params = tail
        .split_once('?')
        .map(|(_, p)| format!("?{p}"))
        .unwrap_or_default();
    format!("{scheme}://{authority}/{db}{params}")
}

/// The server's durability settings, for the table's header.
fn server_settings(url: &str) -> String {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let show = |c: &mut postgres::Client, name: &str| -> String {
        c.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
    };
    let version = show(&mut c, "server_version");
    format!(
        "{version}, fsync {}, synchronous_commit {}, max_connections {}",
        show(&mut c, "fsync"),
        show(&mut c, "synchronous_commit"),
        show(&mut c, "max_connections")
    )
}

/// The committed transactions of database `db` and the WAL flushes of the cluster.
fn counters(admin: &mut postgres::Client, db: &str) -> (i64, i64) {
    admin.batch_execute("SELECT pg_stat_clear_snapshot()").unwrap();
    let xacts: i64 = admin
        .query_one(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = $1",
            &[&db],
        )
        .unwrap()
        .get(0);
    let syncs: i64 = admin
        .query_one("SELECT wal_sync FROM pg_stat_wal", &[])
        .unwrap()
        .get(0);
    (xacts, syncs)
}

fn who(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}

/// How many of `n` jobs producer `i` of [`PRODUCERS`] inserts.
fn share(n: usize, i: usize) -> usize {
    n / PRODUCERS + usize::from(i < n % PRODUCERS)
}

/// Our library: 16 producer threads dispatch; W worker threads wait for work (the waiting poll),
/// fulfil what they hold, and stop when all `n` are done.
fn ours(store: Arc<dyn Store>, workload: Workload, n: usize) -> Figures {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new(["/w"]))
        .build()
        .unwrap();
    let c = Arc::new(
        Contracts::builder(store)
            .fs(Arc::new(fs))
            .real_ids()
            .config(config)
            .build(),
    );
    let (boss, worker) = (who("boss"), who("worker"));
    let done = AtomicUsize::new(0);
    let cancel = Cancel::new();
    let latencies = Mutex::new(Vec::with_capacity(n));
    let finished = Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|s| {
        for i in 0..PRODUCERS {
            let (c, boss, worker) = (&c, &boss, &worker);
            s.spawn(move || {
                for j in 0..share(n, i) {
                    let req =
                        DispatchRequest::new(boss.clone(), worker.clone(), format!("job {i}.{j}"), "/w");
                    loop {
                        match c.dispatch(&req) {
                            Ok(_) => break,
                            Err(r) if r.code() == RefusalCode::StoreBusy => continue,
                            Err(r) => panic!("{r}"),
                        }
                    }
                }
            });
        }
        if let Workload::Pairs(w) = workload {
            for _ in 0..w {
                let (c, worker, done, cancel, latencies, finished) =
                    (&c, &worker, &done, &cancel, &latencies, &finished);
                s.spawn(move || {
                    let mut mine = Vec::new();
                    while done.load(Ordering::SeqCst) < n {
                        let polled = match c.poll_next_task_wait(worker, Duration::from_secs(1), cancel) {
                            Ok(p) => p,
                            Err(r) if r.code() == RefusalCode::StoreBusy => continue,
                            Err(r) => panic!("{r}"),
                        };
                        let Some(held) = polled.held() else { continue };
                        let claimed = Instant::now();
                        loop {
                            match c.fulfill_contract(&held.holder(), &FulfillRequest::new("done")) {
                                Ok(_) => break,
                                Err(r) if r.code() == RefusalCode::StoreBusy => continue,
                                Err(r) => panic!("{r}"),
                            }
                        }
                        mine.push(claimed.elapsed());
                        if done.fetch_add(1, Ordering::SeqCst) + 1 == n {
                            *finished.lock().unwrap() = Some(started.elapsed());
                            cancel.cancel();
                        }
                    }
                    latencies.lock().unwrap().extend(mine);
                });
            }
        }
    });
    let elapsed = finished
        .into_inner()
        .unwrap()
        .unwrap_or_else(|| started.elapsed());
    drop(c);
    Figures {
        per_sec: n as f64 / elapsed.as_secs_f64(),
        latencies: latencies.into_inner().unwrap(),
        ..Figures::default()
    }
}

/// River: 16 producer tasks insert; a client with one queue of W workers works them; completions are
/// counted from River's completion events (sent once a completion is stored).
async fn river<DB: IntoDatabase>(pool: DB, workload: Workload, n: usize) -> Figures {
    let started_at: Arc<Mutex<HashMap<i64, Instant>>> = Arc::new(Mutex::new(HashMap::with_capacity(n)));
    let client = match workload {
        Workload::Enqueue => Client::builder(pool).build().unwrap(),
        Workload::Pairs(w) => {
            let mut workers = Workers::new();
            let seen = started_at.clone();
            workers
                .add_fn(move |_ctx: WorkContext, job: Job<Pair>| {
                    let seen = seen.clone();
                    async move {
                        seen.lock().unwrap().insert(job.id(), Instant::now());
                        Ok::<_, std::io::Error>(WorkOutcome::Complete)
                    }
                })
                .unwrap();
            Client::builder(pool)
                .workers(workers)
                .fetch_cooldown(riverqueue::FETCH_COOLDOWN_MIN)
                .queue(
                    "default",
                    QueueConfig::new(w).with_fetch_poll_interval(riverqueue::FETCH_COOLDOWN_MIN),
                )
                .build()
                .unwrap()
        }
    };
    let mut events = match workload {
        Workload::Enqueue => None,
        Workload::Pairs(_) => Some(
            client
                .subscribe_config(
                    SubscribeConfig::new([EventKind::JobCompleted])
                        .unwrap()
                        .with_buffer_capacity(NonZeroUsize::new(n + 1024).unwrap()),
                )
                .unwrap(),
        ),
    };
    let run = match workload {
        Workload::Enqueue => None,
        Workload::Pairs(_) => Some(client.start().unwrap()),
    };
    let started = Instant::now();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                for _ in 0..share(n, i) {
                    client.insert(Pair {}).await.unwrap();
                }
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(n);
    if let Some(events) = events.as_mut() {
        while latencies.len() < n {
            let event = events.recv().await.unwrap();
            let Some(job) = event.as_job() else { continue };
            let at = started_at.lock().unwrap().remove(&job.job.id);
            if let Some(at) = at {
                latencies.push(at.elapsed());
            }
        }
    }
    for p in producers {
        p.await.unwrap();
    }
    let elapsed = started.elapsed();
    if let Some(mut run) = run {
        run.stop().await.unwrap();
    }
    Figures {
        per_sec: n as f64 / elapsed.as_secs_f64(),
        latencies,
        ..Figures::default()
    }
}

/// A test run: both libraries move a few jobs through SQLite.
fn smoke() {
    let rt = runtime();
    for lib in [Lib::Ours, Lib::River] {
        let f = run(
            &rt,
            lib,
            &Backend::Sqlite(Synchronous::Normal),
            Workload::Pairs(4),
            20,
            0,
        );
        assert_eq!(f.latencies.len(), 20, "{lib:?} completed every job");
    }
}
