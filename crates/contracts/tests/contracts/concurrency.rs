//! CT-165 and CT-166: many claimers in one process (8 threads, each with its own connection) and in
//! many processes (16 re-executions of this test binary) on one SQLite file, checked against
//! CT-155 (single holder) and CT-156 (no contract lost or duplicated). A variant with a 1 ms busy
//! timeout expects `STORE_BUSY` replies and checks that none of them changed the store.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use shiftwork_contracts::store::ListQuery;
use shiftwork_contracts::{
    Contracts, DispatchRequest, RefusalCode, SeededIdSource, SqliteOptions, SqliteStore, Status, Store,
};
use shiftwork_seams::{ManualClock, MemFs, OsFs};

use crate::scenarios::T0;
use crate::support::{agent, dreq, who};

pub const AGENTS: [&str; 4] = ["a0", "a1", "a2", "a3"];

pub fn clock_at(ms: i64) -> ManualClock {
    ManualClock::new(chrono::DateTime::from_timestamp_millis(ms).unwrap())
}

pub fn open(path: &Path, clock: &ManualClock, busy_ms: u32, pool: usize) -> Arc<dyn Store> {
    let options = SqliteOptions {
        busy_timeout_ms: busy_ms,
        pool_size: pool,
        ..SqliteOptions::default()
    };
    // With a 1 ms busy timeout even opening may meet a busy lock: a caller retries STORE_BUSY.
    loop {
        match SqliteStore::open(path, options, Arc::new(clock.clone()), &OsFs) {
            Ok(s) => return Arc::new(s),
            Err(shiftwork_contracts::StoreError::Busy { .. }) => std::thread::yield_now(),
            Err(e) => panic!("{e}"),
        }
    }
}

pub fn facade(store: Arc<dyn Store>, seed: u64) -> Contracts {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    Contracts::builder(store)
        .fs(Arc::new(fs))
        .ids(Arc::new(SeededIdSource::new(seed)))
        .config(crate::support::config(false))
        .build()
}

pub fn dispatch(c: &Contracts, target: &str, n: usize) -> String {
    let fs_root = "/w";
    c.dispatch(&DispatchRequest {
        target_agent: agent(target),
        title: format!("job {n}"),
        workspace_root: fs_root.into(),
        requester_agent: who("boss"),
        ..dreq()
    })
    .map(|d| d.contract_id.to_string())
    .unwrap_or_else(|r| panic!("dispatch failed: {r}"))
}

/// The accounting of CT-155 / CT-156 over the claims observed and the final store.
pub fn check_history(store: &dyn Store, dispatched: &HashSet<String>, claims: &[(String, u64)]) {
    let records = crate::support::every_record(store);
    let by_id: HashMap<&str, &shiftwork_contracts::Contract> =
        records.iter().map(|c| (c.contract_id.as_str(), c)).collect();
    // CT-156: none lost, none duplicated, none unexpected; counts sum to the records.
    assert_eq!(by_id.len(), records.len(), "duplicated contract ids");
    for id in dispatched {
        assert!(by_id.contains_key(id.as_str()), "CT-156: contract {id} was lost");
    }
    assert_eq!(records.len(), dispatched.len(), "CT-156: unexpected records");
    let page = store
        .list(
            &ListQuery {
                limit: 0,
                ..ListQuery::default()
            },
            0,
        )
        .unwrap();
    let c = page.counts;
    assert_eq!(
        c.submitted + c.claimed + c.completed + c.failed + c.timed_out + c.pointer_stale,
        records.len() as u64
    );
    // CT-155: distinct (id, epoch) pairs; no more polls than the final epoch; nothing left queued.
    let mut pairs = HashSet::new();
    let mut per_contract: HashMap<&str, u64> = HashMap::new();
    for (id, epoch) in claims {
        assert!(
            pairs.insert((id.clone(), *epoch)),
            "CT-155: {id} epoch {epoch} was handed out twice"
        );
        *per_contract.entry(id.as_str()).or_default() += 1;
    }
    for (id, n) in per_contract {
        assert!(
            n <= by_id[id].claim_epoch,
            "CT-155: {id} polled {n} times, epoch {}",
            by_id[id].claim_epoch
        );
    }
    for r in &records {
        assert_eq!(
            r.status,
            Status::Claimed,
            "{} left {:?}: every contract claimed exactly once",
            r.contract_id,
            r.status
        );
        assert_eq!(r.claim_epoch, 1);
    }
    assert_eq!(
        claims.len(),
        records.len(),
        "every contract was claimed by exactly one reported poll"
    );
    assert!(store.check_integrity().unwrap().is_clean());
}

#[test]
fn ct165_eight_threads_and_a_dispatcher_on_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let clock = clock_at(T0);
    let seed = facade(open(&path, &clock, 5000, 1), 1);
    let mut dispatched = HashSet::new();
    for n in 0..5000 {
        dispatched.insert(dispatch(&seed, AGENTS[n % 3], n));
    }
    let barrier = Arc::new(Barrier::new(9));
    let started = Instant::now();
    let dispatcher = {
        let (path, clock, barrier) = (path.clone(), clock.clone(), barrier.clone());
        std::thread::spawn(move || {
            let c = facade(open(&path, &clock, 5000, 1), 2);
            barrier.wait();
            (0..1000)
                .map(|n| dispatch(&c, AGENTS[n % 3], 5000 + n))
                .collect::<Vec<_>>()
        })
    };
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pollers: Vec<_> = (0..8)
        .map(|i| {
            let (path, clock, barrier, done) = (path.clone(), clock.clone(), barrier.clone(), done.clone());
            std::thread::spawn(move || {
                let c = facade(open(&path, &clock, 5000, 1), 10 + i as u64);
                let agent = who(AGENTS[i % 3]);
                let mut claims = Vec::new();
                barrier.wait();
                loop {
                    match c.poll_next_task(&agent) {
                        Ok(p) => match p.held() {
                            Some(h) => claims.push((h.contract_id.to_string(), h.claim_epoch)),
                            None if done.load(std::sync::atomic::Ordering::SeqCst) => break,
                            None => std::thread::yield_now(),
                        },
                        Err(r) if r.code() == RefusalCode::StoreBusy => {}
                        Err(r) => panic!("poll failed: {r}"),
                    }
                }
                claims
            })
        })
        .collect();
    dispatched.extend(dispatcher.join().unwrap());
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let claims: Vec<(String, u64)> = pollers.into_iter().flat_map(|p| p.join().unwrap()).collect();
    eprintln!(
        "CT-165: 8 threads claimed {} contracts in {:?}",
        claims.len(),
        started.elapsed()
    );
    check_history(seed.store().as_ref(), &dispatched, &claims);
}

fn child_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// The child side of CT-166 (run by the parent as `--ignored --exact concurrency::child_poller`):
/// waits for the start file, polls its agent until the queue is empty, prints one line per claim.
#[test]
#[ignore = "a child process of ct166_sixteen_processes_on_one_file"]
fn child_poller() {
    let (Some(db), Some(agent), Some(go)) = (child_env("CT_DB"), child_env("CT_AGENT"), child_env("CT_GO"))
    else {
        return;
    };
    let busy: u32 = child_env("CT_BUSY_MS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let clock = clock_at(T0 + 1000);
    let store: Arc<dyn Store> = if db.starts_with("postgres") {
        pg_child_store(&clock)
    } else {
        open(Path::new(&db), &clock, busy, 1)
    };
    let c = facade(store, 99);
    while !Path::new(&go).exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let agent = who(agent.as_str());
    let mut out = std::io::stdout().lock();
    loop {
        match c.poll_next_task(&agent) {
            Ok(p) => match p.held() {
                Some(h) => {
                    use std::io::Write;
                    writeln!(out, "CLAIM {} {}", h.contract_id, h.claim_epoch).unwrap();
                }
                None => break,
            },
            Err(r) if r.code() == RefusalCode::StoreBusy => {
                use std::io::Write;
                writeln!(out, "BUSY").unwrap();
            }
            Err(r) => panic!("poll failed: {r}"),
        }
    }
}

pub fn spawn_child(test: &str, env: &[(&str, String)]) -> std::process::Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", test, "--nocapture", "--test-threads=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn run_processes(children: usize, contracts: usize, busy_ms: u32) -> (usize, usize, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("c.db");
    let clock = clock_at(T0);
    run_processes_on(
        open(&path, &clock, 5000, 1),
        &path.display().to_string(),
        None,
        children,
        contracts,
        busy_ms,
    )
}

/// CT-166 over `store`, whose location the children open (`db`: a file path, or a PostgreSQL URL with
/// its `schema`).
pub fn run_processes_on(
    store: Arc<dyn Store>,
    db: &str,
    schema: Option<&str>,
    children: usize,
    contracts: usize,
    busy_ms: u32,
) -> (usize, usize, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let seed = facade(store, 1);
    let dispatched: HashSet<String> = (0..contracts)
        .map(|n| dispatch(&seed, AGENTS[n % 4], n))
        .collect();
    let procs: Vec<_> = (0..children)
        .map(|i| {
            spawn_child(
                "concurrency::child_poller",
                &[
                    ("CT_DB", db.to_owned()),
                    ("CT_AGENT", AGENTS[i % 4].to_owned()),
                    ("CT_GO", go.display().to_string()),
                    ("CT_BUSY_MS", busy_ms.to_string()),
                    ("CT_PG_SCHEMA", schema.unwrap_or_default().to_owned()),
                ],
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    std::fs::write(&go, b"go").unwrap();
    let mut claims = Vec::new();
    let mut busy = 0;
    for mut p in procs {
        let stdout = p.stdout.take().unwrap();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            // libtest prints "test NAME ... " before the child's first line, on the same line.
            let line = match (line.find("CLAIM "), line.find("BUSY")) {
                (Some(i), _) | (None, Some(i)) => &line[i..],
                _ => continue,
            };
            let mut parts = line.split_whitespace();
            match parts.next() {
                Some("CLAIM") => claims.push((
                    parts.next().unwrap().to_owned(),
                    parts.next().unwrap().parse().unwrap(),
                )),
                Some("BUSY") => busy += 1,
                _ => {}
            }
        }
        assert!(p.wait().unwrap().success(), "a child failed");
    }
    let elapsed = started.elapsed();
    check_history(seed.store().as_ref(), &dispatched, &claims);
    (claims.len(), busy, elapsed)
}

#[test]
fn ct166_sixteen_processes_on_one_file() {
    let (claims, busy, elapsed) = run_processes(16, 2000, 5000);
    eprintln!("CT-166: 16 processes claimed {claims} contracts in {elapsed:?} ({busy} STORE_BUSY)");
}

#[test]
fn ct166_busy_timeout_of_one_millisecond_leaves_the_store_unchanged() {
    let (claims, busy, elapsed) = run_processes(16, 1000, 1);
    eprintln!(
        "CT-166 (busy_timeout 1 ms): 16 processes claimed {claims} contracts in {elapsed:?}, {busy} STORE_BUSY replies"
    );
    assert!(
        busy > 0,
        "with a 1 ms busy timeout some polls must answer STORE_BUSY"
    );
}

#[cfg(feature = "postgres")]
fn pg_child_store(clock: &ManualClock) -> Arc<dyn Store> {
    let schema = child_env("CT_PG_SCHEMA").unwrap_or_default();
    Arc::new(crate::support::pg_store(Arc::new(clock.clone()), &schema))
}

#[cfg(not(feature = "postgres"))]
fn pg_child_store(_clock: &ManualClock) -> Arc<dyn Store> {
    panic!("a PostgreSQL child in a build without the postgres feature")
}
