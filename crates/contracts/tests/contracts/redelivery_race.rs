//! §13 across processes and connections: a waiting poll woken by a dispatch committed by another
//! process (SQLite, through the change counter) or another connection (PostgreSQL, through
//! `LISTEN`/`NOTIFY`) within 100 ms (CT-180), and the redelivery race of CT-190: 16 worker processes
//! over 600 contracts with `max_deliveries: 3`, each worker killing itself with SIGKILL on a quarter of
//! its claims, on SQLite and on PostgreSQL. The workers' clock runs 100 times faster than the wall
//! clock (one clock shared by every process through the start instant they are given), so leases of
//! 60 s and backoffs of 30 s and 60 s pass in well under a second.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use shiftwork_contracts::store::ListQuery;
use shiftwork_contracts::wait::Cancel;
use shiftwork_contracts::{
    Contracts, DispatchRequest, EndReason, FulfillRequest, HolderRef, RefusalCode, SeededIdSource,
    SqliteOptions, SqliteStore, Status, Store,
};
use shiftwork_seams::{Clock, MemFs, OsFs, SystemClock};

use crate::support::{agent, instant, who};

fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// A clock `SPEED` times faster than the wall clock, the same in every process given `start` (wall
/// milliseconds): its time is `BASE + (wall − start) × SPEED`.
#[derive(Clone, Copy)]
struct FastClock {
    start: i64,
}

const SPEED: i64 = 100;
const BASE: i64 = crate::scenarios::T0;

impl Clock for FastClock {
    fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(BASE + (wall_ms() - self.start) * SPEED).unwrap()
    }
    fn monotonic(&self) -> Duration {
        Duration::from_millis(((wall_ms() - self.start) * SPEED).max(0) as u64)
    }
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration / SPEED as u32);
    }
    fn wait_until(&self, signal: &shiftwork_seams::Signal, deadline: Duration) -> bool {
        // Real time runs SPEED times slower than this clock's.
        let real = shiftwork_seams::SystemClock::new();
        let left = deadline.saturating_sub(self.monotonic()) / SPEED as u32;
        real.wait_until(signal, real.monotonic() + left)
    }
}

fn facade(store: Arc<dyn Store>, seed: u64) -> Contracts {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    Contracts::builder(store)
        .fs(Arc::new(fs))
        .ids(Arc::new(SeededIdSource::new(seed)))
        .config(crate::support::config(false))
        .build()
}

/// The store at `db` (a file, or a PostgreSQL URL with its `schema`), judging by `clock`.
fn open(db: &str, schema: Option<&str>, clock: Arc<dyn Clock>) -> Arc<dyn Store> {
    if db.starts_with("postgres") {
        return pg(schema.unwrap_or_default(), clock);
    }
    let options = SqliteOptions {
        pool_size: 2,
        ..SqliteOptions::default()
    };
    loop {
        match SqliteStore::open(Path::new(db), options, clock.clone(), &OsFs) {
            Ok(s) => return Arc::new(s),
            Err(shiftwork_contracts::StoreError::Busy { .. }) => std::thread::yield_now(),
            Err(e) => panic!("{e}"),
        }
    }
}

#[cfg(feature = "postgres")]
fn pg(schema: &str, clock: Arc<dyn Clock>) -> Arc<dyn Store> {
    Arc::new(crate::support::pg_store(clock, schema))
}

#[cfg(not(feature = "postgres"))]
fn pg(_schema: &str, _clock: Arc<dyn Clock>) -> Arc<dyn Store> {
    panic!("a PostgreSQL child in a build without the postgres feature")
}

fn spawn(test: &str, envs: &[(&str, String)], stdout: Stdio) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", test, "--nocapture", "--test-threads=1"])
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::inherit());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

// ----- CT-180: woken by another process / another connection -----

/// The child of the SQLite wake test: opens the database, says READY, dispatches to `bob` each time
/// the parent asks on stdin, and answers the wall instant its commit returned.
#[test]
#[ignore = "a child process of ct180_a_dispatch_from_another_process_wakes_a_waiter_within_100_ms"]
fn child_dispatcher() {
    let Some(db) = env("CT_DB") else { return };
    let c = facade(open(&db, None, Arc::new(SystemClock::new())), 77);
    let mut out = std::io::stdout().lock();
    writeln!(out, "READY").unwrap();
    out.flush().unwrap();
    for (n, _) in std::io::stdin().lock().lines().enumerate() {
        crate::concurrency::dispatch(&c, "bob", n);
        writeln!(out, "SENT {}", wall_ms()).unwrap();
        out.flush().unwrap();
    }
}

/// Waits as `bob` on `waiter` for up to 10 s in a thread, calls `dispatch` (which returns the wall
/// instant its commit returned) once the wait is under way, and returns the latency from that commit
/// to the wake.
fn wake_latency(waiter: Arc<Contracts>, dispatch: &mut dyn FnMut() -> i64) -> i64 {
    let thread = std::thread::spawn(move || {
        let out = waiter
            .poll_next_task_wait(&who("bob"), Duration::from_secs(10), &Cancel::new())
            .unwrap();
        assert!(out.held().is_some(), "woken and claimed: {out:?}");
        wall_ms()
    });
    std::thread::sleep(Duration::from_millis(300));
    let sent = dispatch();
    let woken = thread.join().unwrap();
    woken - sent
}

/// CT-180: a dispatch committed by another process wakes a waiting poll within 100 ms (the best of
/// five; every one within a second, far below the waiter's own five-second look).
#[test]
fn ct180_a_dispatch_from_another_process_wakes_a_waiter_within_100_ms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db").display().to_string();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
    let waiter = Arc::new(facade(open(&db, None, clock.clone()), 1));
    let mut child = spawn(
        "redelivery_race::child_dispatcher",
        &[("CT_DB", db.clone())],
        Stdio::piped(),
    );
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let next = |lines: &mut std::io::Lines<BufReader<std::process::ChildStdout>>, what: &str| loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(i) = line.find(what) {
            return line[i + what.len()..].trim().to_owned();
        }
    };
    next(&mut lines, "READY");
    let mut input = child.stdin.take().unwrap();
    let mut latencies = Vec::new();
    for _ in 0..5 {
        let latency = wake_latency(waiter.clone(), &mut || {
            writeln!(input, "go").unwrap();
            input.flush().unwrap();
            next(&mut lines, "SENT ").parse().unwrap()
        });
        latencies.push(latency);
    }
    drop(input);
    assert!(child.wait().unwrap().success());
    latencies.sort_unstable();
    eprintln!("CT-180 SQLite, another process: wake latencies {latencies:?} ms");
    assert!(latencies[0] < 100, "{latencies:?}");
    assert!(latencies[4] < 1000, "{latencies:?}");
}

/// Two stores on one fresh PostgreSQL schema, as on two machines: a waiter's facade on the first,
/// a sender's on the second (`None` without a server).
#[cfg(feature = "postgres")]
struct TwoConnections {
    _shared: std::sync::RwLockReadGuard<'static, ()>,
    one: Arc<shiftwork_contracts::PgStore>,
    waiter: Arc<Contracts>,
    sender: Contracts,
}

#[cfg(feature = "postgres")]
fn two_connections() -> Option<TwoConnections> {
    crate::support::postgres_url()?;
    let shared = crate::support::pg_shared();
    let schema = crate::support::fresh_schema();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
    let one = Arc::new(crate::support::pg_store(clock.clone(), &schema));
    let other: Arc<dyn Store> = Arc::new(crate::support::pg_store(clock, &schema));
    Some(TwoConnections {
        _shared: shared,
        waiter: Arc::new(facade(one.clone(), 1)),
        sender: facade(other, 2),
        one,
    })
}

/// CT-180: a dispatch committed on another connection (another store, as on another machine) wakes a
/// waiting poll within 100 ms through `LISTEN`/`NOTIFY`.
#[cfg(feature = "postgres")]
#[test]
fn ct180_a_dispatch_from_another_connection_wakes_a_waiter_within_100_ms() {
    let Some(TwoConnections {
        _shared,
        one,
        waiter,
        sender,
    }) = two_connections()
    else {
        return;
    };
    let mut latencies: Vec<i64> = (0..5)
        .map(|n| {
            wake_latency(waiter.clone(), &mut || {
                crate::concurrency::dispatch(&sender, "bob", n);
                wall_ms()
            })
        })
        .collect();
    latencies.sort_unstable();
    eprintln!("CT-180 PostgreSQL, another connection: wake latencies {latencies:?} ms");
    assert!(latencies[0] < 100, "{latencies:?}");
    assert!(latencies[4] < 1000, "{latencies:?}");
    one.drop_schema().unwrap();
}

/// Issue 36 item 2: a write notifies once it has committed, on its own (the notification left the
/// write's transaction, where PostgreSQL serialised every notifying commit with its WAL flush).
/// A dispatch and a release committed on another connection each still wake a waiting poll within
/// 100 ms, and the woken poll claims what the write committed: the dispatched contract, then the
/// released one, under a new epoch.
#[cfg(feature = "postgres")]
#[test]
fn issue36_item2_writes_notify_after_their_commit_and_still_wake_a_waiter() {
    let Some(TwoConnections {
        _shared,
        one,
        waiter,
        sender,
    }) = two_connections()
    else {
        return;
    };
    let mut dispatch_latencies = Vec::new();
    let mut release_latencies = Vec::new();
    for n in 0..3 {
        // A dispatch: the waiter claims it; the sender takes it over once it is released below.
        dispatch_latencies.push(wake_latency(waiter.clone(), &mut || {
            crate::concurrency::dispatch(&sender, "bob", n);
            wall_ms()
        }));
        // A release: the waiter's claim is handed back by the sender's store, as by another machine.
        let held = sender
            .poll_next_task(&who("bob"))
            .unwrap_or_else(|_| unreachable!("the poll answers"));
        assert!(
            held.held().is_none(),
            "the waiter holds the only contract: {held:?}"
        );
        let dispatched = crate::concurrency::dispatch(&sender, "bob", 100 + n);
        let first = sender.poll_next_task(&who("bob")).unwrap();
        let first = first.held().unwrap_or_else(|| panic!("claimed {dispatched}"));
        assert_eq!(first.contract_id.as_str(), dispatched);
        let epoch = first.claim_epoch;
        let holder = first.holder();
        release_latencies.push(wake_latency(waiter.clone(), &mut || {
            sender.release_contract(&holder, Some("handing it back")).unwrap();
            wall_ms()
        }));
        let stored = one.get(&first.contract_id).unwrap().unwrap();
        assert_eq!(
            stored.status,
            shiftwork_contracts::Status::Claimed,
            "the waiter claimed it again"
        );
        assert_eq!(stored.claim_epoch, epoch + 1, "under a new epoch");
    }
    dispatch_latencies.sort_unstable();
    release_latencies.sort_unstable();
    eprintln!(
        "issue 36 item 2, PostgreSQL: dispatch wakes {dispatch_latencies:?} ms, release wakes {release_latencies:?} ms"
    );
    assert!(dispatch_latencies[0] < 100, "{dispatch_latencies:?}");
    assert!(release_latencies[0] < 100, "{release_latencies:?}");
    assert!(dispatch_latencies[2] < 1000 && release_latencies[2] < 1000);
    one.drop_schema().unwrap();
}

// ----- CT-190: the redelivery race -----

const CONTRACTS: usize = 600;
const WORKERS: usize = 16;
const AGENTS: [&str; 4] = ["w0", "w1", "w2", "w3"];

/// A CT-190 worker: polls its agent (waiting), logs each claim before anything else, kills itself with
/// SIGKILL on a quarter of its claims (at once, after an extension, or in the middle of the work), and
/// fulfills the others, logging the outcome; stops when the stop file appears.
#[test]
#[ignore = "a child process of ct190_redelivery_race_*"]
fn child_worker() {
    let (Some(db), Some(name), Some(log), Some(stop), Some(start), Some(seed)) = (
        env("CT_DB"),
        env("CT_AGENT"),
        env("CT_LOG"),
        env("CT_STOP"),
        env("CT_START"),
        env("CT_SEED"),
    ) else {
        return;
    };
    let clock: Arc<dyn Clock> = Arc::new(FastClock {
        start: start.parse().unwrap(),
    });
    let schema = env("CT_PG_SCHEMA");
    let c = facade(
        open(&db, schema.as_deref(), clock.clone()),
        seed.parse::<u64>().unwrap() + 500,
    );
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let mut line = |s: String| {
        log.write_all(format!("{s}\n").as_bytes()).unwrap();
    };
    let mut rng = xorshift(seed.parse().unwrap());
    let me = who(&name);
    let die = || {
        // SAFETY: kill(2) on this very process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    };
    while !Path::new(&stop).exists() {
        // 60 s on the fast clock: 0.6 s of wall time.
        let polled = match c.poll_next_task_wait(&me, Duration::from_secs(60), &Cancel::new()) {
            Ok(p) => p,
            Err(r) if r.code() == RefusalCode::StoreBusy => continue,
            Err(r) => panic!("poll failed: {r}"),
        };
        let Some(h) = polled.held() else { continue };
        line(format!(
            "CLAIM {} {} {}",
            h.contract_id, h.claim_epoch, h.delivery_count
        ));
        let holder = HolderRef {
            contract_id: h.contract_id.clone(),
            agent_id: me.clone(),
            claim_epoch: Some(h.claim_epoch),
        };
        if rng().is_multiple_of(4) {
            match rng() % 3 {
                0 => die(),
                1 => {
                    let _ = c.extend_ttl(&holder);
                    die();
                }
                _ => {
                    std::thread::sleep(Duration::from_millis(rng() % 20));
                    die();
                }
            }
        }
        match c.fulfill_contract(
            &holder,
            &FulfillRequest {
                result_summary: String::from("done"),
                ..Default::default()
            },
        ) {
            Ok(_) => line(format!("DONE {} {}", h.contract_id, h.claim_epoch)),
            Err(r) => line(format!("REFUSED {} {}", h.contract_id, r.code())),
        }
    }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// CT-190 over the store at `db`: 600 contracts, 16 workers respawned when they kill themselves, until
/// every contract is terminal; then the accounting.
fn race(db: &str, schema: Option<&str>, label: &str) {
    let dir = tempfile::tempdir().unwrap();
    let stop = dir.path().join("stop");
    let start = wall_ms();
    let clock: Arc<dyn Clock> = Arc::new(FastClock { start });
    let store = open(db, schema, clock.clone());
    let c = facade(store.clone(), 1);
    for n in 0..CONTRACTS {
        c.dispatch(
            &DispatchRequest::new(
                who("boss"),
                agent(AGENTS[n % AGENTS.len()]),
                format!("job {n}"),
                "/w",
            )
            .exec_ttl(Duration::from_secs(60))
            .max_deliveries(3),
        )
        .unwrap();
    }
    let mut spawned = 0usize;
    let mut logs: Vec<PathBuf> = Vec::new();
    let start_worker = |slot: usize, logs: &mut Vec<PathBuf>, spawned: &mut usize| -> Child {
        let log = dir.path().join(format!("worker-{}.log", *spawned));
        logs.push(log.clone());
        *spawned += 1;
        spawn(
            "redelivery_race::child_worker",
            &[
                ("CT_DB", db.to_owned()),
                ("CT_PG_SCHEMA", schema.unwrap_or_default().to_owned()),
                ("CT_AGENT", AGENTS[slot % AGENTS.len()].to_owned()),
                ("CT_LOG", log.display().to_string()),
                ("CT_STOP", stop.display().to_string()),
                ("CT_START", start.to_string()),
                ("CT_SEED", spawned.to_string()),
            ],
            Stdio::null(),
        )
    };
    let mut workers: Vec<(usize, Child)> = (0..WORKERS)
        .map(|slot| (slot, start_worker(slot, &mut logs, &mut spawned)))
        .collect();
    let began = Instant::now();
    let mut killed = 0usize;
    loop {
        for (slot, child) in &mut workers {
            if let Some(status) = child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                assert_eq!(
                    status.signal(),
                    Some(libc::SIGKILL),
                    "{label}: a worker failed: {status:?}"
                );
                killed += 1;
                *child = start_worker(*slot, &mut logs, &mut spawned);
            }
        }
        let now = clock.now().timestamp_millis();
        let _ = c.sweep(instant(now));
        let counts = store.list(&ListQuery::default(), now).unwrap().counts;
        if counts.submitted + counts.claimed == 0 {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(300),
            "{label}: still live after 300 s: {counts:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::write(&stop, b"stop").unwrap();
    for (_, mut child) in workers {
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert!(
            status.success() || status.signal() == Some(libc::SIGKILL),
            "{label}: {status:?}"
        );
    }
    let elapsed = began.elapsed();
    // The accounting of CT-190.
    let mut claims: HashMap<String, u32> = HashMap::new();
    let mut done: HashMap<String, Vec<u64>> = HashMap::new();
    for log in &logs {
        let Ok(text) = std::fs::read_to_string(log) else {
            continue;
        };
        for l in text.lines() {
            let mut p = l.split_whitespace();
            match (p.next(), p.next(), p.next()) {
                (Some("CLAIM"), Some(id), Some(_)) => *claims.entry(id.to_owned()).or_default() += 1,
                (Some("DONE"), Some(id), Some(epoch)) => done
                    .entry(id.to_owned())
                    .or_default()
                    .push(epoch.parse().unwrap()),
                _ => {}
            }
        }
    }
    let records = crate::support::every_record(store.as_ref());
    assert_eq!(records.len(), CONTRACTS);
    let (mut completed, mut timed_out, mut redelivered) = (0, 0, 0);
    for r in &records {
        let id = r.contract_id.as_str();
        let logged = claims.get(id).copied().unwrap_or(0);
        assert_eq!(
            r.delivery_count, logged,
            "{label}: {id}: delivery_count {} but {logged} claims logged",
            r.delivery_count
        );
        redelivered += usize::from(r.delivery_count > 1);
        let completions = done.get(id).map_or(0, Vec::len);
        match r.status {
            Status::Completed => {
                assert_eq!(completions, 1, "{label}: {id} completed {completions} times");
                assert_eq!(
                    done[id][0], r.claim_epoch,
                    "{label}: {id}: the accepted epoch is current"
                );
                completed += 1;
            }
            Status::TimedOut => {
                assert_eq!(completions, 0, "{label}: {id}");
                assert_eq!(r.end_reason, Some(EndReason::ExecTtlExpired), "{label}: {id}");
                assert_eq!(
                    r.delivery_count, 3,
                    "{label}: {id}: timed out after {} claims",
                    r.delivery_count
                );
                timed_out += 1;
            }
            other => panic!("{label}: {id} ended {other:?}"),
        }
    }
    let doubles = done.values().filter(|d| d.len() > 1).count();
    assert_eq!(doubles, 0, "{label}: double completions");
    assert!(store.check_integrity().unwrap().is_clean());
    assert!(
        killed > 0 && redelivered > 0,
        "{label}: the race ran ({killed} kills)"
    );
    eprintln!(
        "CT-190 {label}: {CONTRACTS} contracts, {WORKERS} workers, {killed} SIGKILLs, {} claims: {completed} COMPLETED once, {timed_out} TIMED_OUT after 3 claims, {redelivered} redelivered, 0 double completions, in {elapsed:?}",
        claims.values().sum::<u32>()
    );
}

/// CT-190 on SQLite.
#[test]
fn ct190_redelivery_race_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    race(&dir.path().join("c.db").display().to_string(), None, "SQLite");
}

/// CT-190 on PostgreSQL.
#[cfg(feature = "postgres")]
#[test]
fn ct190_redelivery_race_on_postgres() {
    let Some(url) = crate::support::postgres_url() else {
        return;
    };
    let _shared = crate::support::pg_shared();
    let schema = crate::support::fresh_schema();
    // The parent's store creates the schema the children open.
    let first = crate::support::pg_store(Arc::new(SystemClock::new()), &schema);
    drop(first);
    race(&url, Some(&schema), "PostgreSQL");
    let cleanup = crate::support::pg_store(Arc::new(SystemClock::new()), &schema);
    cleanup.drop_schema().unwrap();
}
