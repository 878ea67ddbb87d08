//! Waiting is cheap. The claim throughput of busy agents on one SQLite file (2 threads, each
//! with its own store, polling until 10,000 contracts are claimed) is measured alone and while 64
//! other agents wait for work (`poll_next_task_wait`, 60 s, again and again): once as 64 threads of
//! this process over one store, once as 64 processes of their own (as 64 MCP servers would). The
//! target: throughput within 10 % of its value without waiters. Each case runs three times, alternating,
//! and the medians are compared.
//!
//! `cargo bench -p benches --bench contracts_wait`; `SHIFTWORK_BENCH_QUICK=1` shrinks the workload
//! tenfold. A test run only checks that a waiter wakes for a dispatch.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::wait::Cancel;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, SqliteOptions, SqliteStore, Store,
};
use shiftwork_seams::{MemFs, OsFs, SystemClock};

mod common;

const WAITERS: usize = 64;
const CLAIMERS: usize = 2;

fn main() {
    if let Ok(role) = std::env::var("SHIFTWORK_BENCH_WAITER") {
        waiter_process(&role);
        return;
    }
    if common::benching() {
        figures();
    } else {
        smoke();
    }
    divan::main();
}

fn who(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}

fn open(path: &Path) -> Arc<dyn Store> {
    let options = SqliteOptions {
        pool_size: 2,
        ..SqliteOptions::default()
    };
    Arc::new(SqliteStore::open(path, options, Arc::new(SystemClock::new()), &OsFs).unwrap())
}

fn facade(store: Arc<dyn Store>) -> Contracts {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new(["/w"]))
        .build()
        .unwrap();
    Contracts::builder(store)
        .fs(Arc::new(fs))
        .config(config)
        .real_ids()
        .build()
}

fn fill(c: &Contracts, n: usize) {
    for i in 0..n {
        c.dispatch(&DispatchRequest::new(
            who("boss"),
            who("busy"),
            format!("job {i}"),
            "/w",
        ))
        .unwrap();
    }
}

/// Claims per second of `CLAIMERS` threads polling `busy` until `n` contracts are claimed.
fn claim_rate(path: &Path, n: usize) -> f64 {
    fill(&facade(open(path)), n);
    let started = Instant::now();
    let claimed: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLAIMERS)
            .map(|_| s.spawn(|| common::claim_until_empty(&facade(open(path)), &who("busy"))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(claimed, n);
    n as f64 / started.elapsed().as_secs_f64()
}

/// A waiting agent in its own process: waits for work again and again until killed.
fn waiter_process(role: &str) {
    let (db, agent) = role.split_once('|').unwrap();
    let c = facade(open(Path::new(db)));
    loop {
        let _ = c.poll_next_task_wait(&who(agent), Duration::from_secs(60), &Cancel::new());
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn figures() {
    let n = 10_000 / common::quick();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wait.db");
    drop(open(&path));
    let (mut alone, mut threads, mut processes) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        alone.push(claim_rate(&path, n));
        // 64 waiting threads over one store of this process.
        let stop = Arc::new(AtomicBool::new(false));
        let store = open(&path);
        let cancel = Cancel::new();
        let waiters: Vec<_> = (0..WAITERS)
            .map(|i| {
                let (store, stop, cancel) = (store.clone(), stop.clone(), cancel.clone());
                std::thread::spawn(move || {
                    let c = facade(store);
                    while !stop.load(Ordering::SeqCst) {
                        let _ = c.poll_next_task_wait(
                            &who(&format!("idle{i}")),
                            Duration::from_secs(60),
                            &cancel,
                        );
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        threads.push(claim_rate(&path, n));
        stop.store(true, Ordering::SeqCst);
        cancel.cancel();
        waiters.into_iter().for_each(|w| w.join().unwrap());
        // 64 waiting processes, each with its own store (and its own watching thread).
        let children: Vec<Child> = (0..WAITERS)
            .map(|i| {
                Command::new(std::env::current_exe().unwrap())
                    .env("SHIFTWORK_BENCH_WAITER", format!("{}|idle{i}", path.display()))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(Duration::from_millis(1500));
        processes.push(claim_rate(&path, n));
        for mut c in children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    let (a, t, p) = (
        median(alone.clone()),
        median(threads.clone()),
        median(processes.clone()),
    );
    let pct = |x: f64| (x / a - 1.0) * 100.0;
    println!(
        "waiting is cheap: claims/s of {CLAIMERS} busy claimers, median of 3: {a:.0} alone; {t:.0} with {WAITERS} waiting threads ({:+.1} %); {p:.0} with {WAITERS} waiting processes ({:+.1} %) (target: within 10 %); runs {alone:.0?} / {threads:.0?} / {processes:.0?}",
        pct(t),
        pct(p)
    );
}

/// A test run: a waiter wakes for a dispatch.
fn smoke() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smoke.db");
    let c = Arc::new(facade(open(&path)));
    let waiter = {
        let c = c.clone();
        std::thread::spawn(move || {
            c.poll_next_task_wait(&who("busy"), Duration::from_secs(10), &Cancel::new())
                .unwrap()
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    fill(&c, 1);
    assert!(waiter.join().unwrap().held().is_some());
}
