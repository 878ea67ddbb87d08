//! Benchmarks of `contracts`. `main` first measures four figures, each with a performance target,
//! and prints each next to its target, with the `synchronous` setting, the CPU model and whether
//! the accelerated SHA-256 path is in use; then divan runs the per-operation benches.
//!
//! * claims per second in one process (target ≥ 2,000), also with 8 threads and with
//!   `synchronous = FULL`;
//! * claims per second contended across 32 processes (target ≥ 500), with zero double claims;
//! * one sweep of 10,000 expired contracts among 100,000 (target < 50 ms);
//! * fingerprint throughput of a 1 GiB file (target ≥ 500 MB/s with SHA instructions).
//!
//! `SHIFTWORK_BENCH_QUICK=1` shrinks every figure's workload tenfold (for a smoke run).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use divan::Bencher;
use divan::counter::BytesCount;
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::store::ListQuery;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, RefusalCode, SqliteOptions, SqliteStore, Store,
    Synchronous,
};
use shiftwork_seams::{MemFs, OsFs, SystemClock};

const AGENTS: [&str; 4] = ["a0", "a1", "a2", "a3"];

fn agent(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}

fn who(name: &str) -> AgentId {
    agent(name)
}

/// The benches' facade configuration: the in-memory workspace `/w` is the one allowed root.
fn config() -> ContractsConfig {
    ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new(["/w"]))
        .build()
        .unwrap()
}

fn main() {
    if let Ok(role) = std::env::var("SHIFTWORK_BENCH_CHILD") {
        child(&role);
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not, and then only divan's
    // one-iteration test run happens, not the long figures.
    if std::env::args().any(|a| a == "--bench") {
        figures();
    }
    divan::main();
}

fn sha_accelerated() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sha")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("sha2")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

fn open(path: &Path, sync: Synchronous, pool: usize) -> Arc<dyn Store> {
    let options = SqliteOptions {
        synchronous: sync,
        pool_size: pool,
        ..SqliteOptions::default()
    };
    Arc::new(SqliteStore::open(path, options, Arc::new(SystemClock::new()), &OsFs).unwrap())
}

fn facade(store: Arc<dyn Store>, fs: &MemFs) -> Contracts {
    Contracts::builder(store)
        .fs(Arc::new(fs.clone()))
        .config(config())
        .real_ids()
        .build()
}

fn workspace() -> MemFs {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    fs
}

fn fill(c: &Contracts, n: usize, agents: &[&str]) {
    for i in 0..n {
        c.dispatch(&DispatchRequest::new(
            who("boss"),
            agent(agents[i % agents.len()]),
            format!("job {i}"),
            "/w",
        ))
        .unwrap();
    }
}

fn sync_name(s: Synchronous) -> &'static str {
    match s {
        Synchronous::Normal => "NORMAL",
        Synchronous::Full => "FULL",
    }
}

/// Claims per second in one process: one thread (or 8) polling until the queue of 20,000 is empty.
fn in_process(threads: usize, sync: Synchronous) -> f64 {
    let n = 20_000 / common::quick();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let fs = workspace();
    let seed = facade(open(&path, Synchronous::Normal, 1), &fs);
    fill(&seed, n, &["bob"]);
    let started = Instant::now();
    let claims: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (path, fs) = (path.clone(), fs.clone());
                s.spawn(move || common::claim_until_empty(&facade(open(&path, sync, 1), &fs), &who("bob")))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(claims, n);
    claims as f64 / started.elapsed().as_secs_f64()
}

/// A child of the contended figure: waits for the start file, polls its agent until empty; prints
/// its claims, latencies (µs) and busy count.
fn child(role: &str) {
    let mut parts = role.split('|');
    let (db, agent, go) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let store: Arc<dyn Store> = if db.starts_with("postgres") {
        postgres_store(db)
    } else {
        open(Path::new(db), Synchronous::Normal, 1)
    };
    let fs = workspace();
    let c = facade(store, &fs);
    while !Path::new(go).exists() {
        std::thread::sleep(Duration::from_micros(200));
    }
    let mut out = std::io::stdout().lock();
    let (mut busy, mut lat) = (0u64, Vec::new());
    loop {
        let t = Instant::now();
        match c.poll_next_task(&who(agent)) {
            Ok(p) => match p.held() {
                Some(h) => {
                    lat.push(t.elapsed().as_micros() as u64);
                    writeln!(out, "C {} {}", h.contract_id, h.claim_epoch).unwrap();
                }
                None => break,
            },
            Err(r) if r.code() == RefusalCode::StoreBusy => busy += 1,
            Err(r) => panic!("{r}"),
        }
    }
    writeln!(out, "B {busy}").unwrap();
    for l in lat {
        writeln!(out, "L {l}").unwrap();
    }
}

#[cfg(feature = "postgres")]
fn postgres_store(url: &str) -> Arc<dyn Store> {
    let options = shiftwork_contracts::PgOptions {
        schema: std::env::var("SHIFTWORK_BENCH_PG_SCHEMA").ok(),
        ..shiftwork_contracts::PgOptions::default()
    };
    Arc::new(shiftwork_contracts::PgStore::connect(url, options).unwrap())
}

#[cfg(not(feature = "postgres"))]
fn postgres_store(_url: &str) -> Arc<dyn Store> {
    panic!("the benches were built without the postgres feature")
}

/// Contended claims: 32 processes, 4 agents, 20,000 contracts; claims per second from the start
/// barrier to the last exit, p50/p99 latency and STORE_BUSY replies; every contract claimed exactly
/// once.
pub fn contended(db: &str, store: Arc<dyn Store>, label: &str, extra_env: &[(&str, String)]) {
    let n = 20_000 / common::quick();
    let fs = workspace();
    let seed = facade(store.clone(), &fs);
    fill(&seed, n, &AGENTS);
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let children: Vec<_> = (0..32)
        .map(|i| {
            let mut cmd = Command::new(std::env::current_exe().unwrap());
            cmd.env(
                "SHIFTWORK_BENCH_CHILD",
                format!("{db}|{}|{}", AGENTS[i % 4], go.display()),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
            for (k, v) in extra_env {
                cmd.env(k, v);
            }
            cmd.spawn().unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    std::fs::write(&go, b"go").unwrap();
    let mut seen = HashSet::new();
    let (mut busy, mut lat) = (0u64, Vec::new());
    let readers: Vec<_> = children
        .into_iter()
        .map(|mut c| {
            let out = c.stdout.take().unwrap();
            std::thread::spawn(move || {
                let lines: Vec<String> = BufReader::new(out).lines().map(Result::unwrap).collect();
                assert!(c.wait().unwrap().success());
                lines
            })
        })
        .collect();
    let mut all_lines = Vec::new();
    for r in readers {
        all_lines.extend(r.join().unwrap());
    }
    let elapsed = started.elapsed();
    for l in all_lines {
        let mut p = l.split(' ');
        match p.next() {
            Some("C") => assert!(
                seen.insert((p.next().unwrap().to_owned(), p.next().unwrap().to_owned())),
                "double claim"
            ),
            Some("B") => busy += p.next().unwrap().parse::<u64>().unwrap(),
            Some("L") => lat.push(p.next().unwrap().parse::<u64>().unwrap()),
            _ => {}
        }
    }
    assert_eq!(seen.len(), n, "every contract claimed exactly once");
    let left = store
        .list(
            &ListQuery {
                limit: 0,
                ..ListQuery::default()
            },
            0,
        )
        .unwrap()
        .counts
        .submitted;
    assert_eq!(left, 0, "no contract left SUBMITTED");
    assert!(store.check_integrity().unwrap().is_clean());
    lat.sort_unstable();
    let pct = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize];
    println!(
        "contended claims, {label}: {:.0} claims/s across 32 processes (target >= 500), {n} contracts in {:.2} s, 0 double claims, p50 {} us, p99 {} us, {busy} STORE_BUSY retried",
        n as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
    );
}

/// One sweep: 100,000 records; 5,000 queued past their deadline, 5,000 claimed past their lease.
fn sweep_figure() {
    let q = common::quick();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let clock = shiftwork_seams::ManualClock::new(
        chrono::DateTime::from_timestamp_millis(1_767_225_600_000).unwrap(),
    );
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&path, SqliteOptions::default(), Arc::new(clock.clone()), &OsFs).unwrap());
    let fs = workspace();
    let c = Contracts::builder(store.clone())
        .fs(Arc::new(fs))
        .config(config())
        .real_ids()
        .build();
    let d = |agent_name: &str, qttl: u64, ettl: u64| {
        c.dispatch(
            &DispatchRequest::new(who("boss"), agent(agent_name), "x", "/w")
                .queue_ttl(Duration::from_secs(qttl))
                .exec_ttl(Duration::from_secs(ettl)),
        )
        .unwrap();
    };
    for _ in 0..5000 / q {
        d("claimed", 600, 60); // claimed below, lease 60 s
    }
    for _ in 0..5000 / q {
        d("queued", 60, 60); // queue deadline 60 s
    }
    for _ in 0..90_000 / q {
        d("live", 604_800, 86_400);
    }
    while c.poll_next_task(&who("claimed")).unwrap().held().is_some() {}
    let now = 1_767_225_600_000 + 120_000;
    let started = Instant::now();
    let r = c
        .sweep(chrono::DateTime::from_timestamp_millis(now).unwrap())
        .unwrap();
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(
        (r.queued_timed_out, r.claimed_timed_out),
        (5000 / q as u64, 5000 / q as u64)
    );
    println!(
        "sweep: {} + {} expired contracts among {} records in {ms:.1} ms (target < 50 ms), synchronous NORMAL",
        r.queued_timed_out,
        r.claimed_timed_out,
        100_000 / q
    );
}

/// Fingerprint throughput: fingerprint and verify one 1 GiB file (page-cached).
fn fingerprint_figure() {
    let size: usize = (1 << 30) / common::quick();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk: Vec<u8> = (0..(1 << 20)).map(|i| (i % 251) as u8).collect();
        for _ in 0..size / chunk.len() {
            f.write_all(&chunk).unwrap();
        }
    }
    // Warm the page cache.
    shiftwork_contracts::fingerprint::fingerprint(&OsFs, &path, "big.bin").unwrap();
    let started = Instant::now();
    let p = shiftwork_contracts::fingerprint::fingerprint(&OsFs, &path, "big.bin").unwrap();
    let fp = size as f64 / started.elapsed().as_secs_f64() / 1e6;
    let started = Instant::now();
    let anywhere = AllowedRoots::new([dir.path()]);
    let drift = shiftwork_contracts::fingerprint::verify(
        &OsFs,
        dir.path().to_str().unwrap(),
        std::slice::from_ref(&p),
        &anywhere,
    )
    .unwrap();
    let vf = size as f64 / started.elapsed().as_secs_f64() / 1e6;
    assert!(drift.is_empty());
    // A size mismatch is found without reading the file.
    let mut wrong = p.clone();
    wrong.size += 1;
    let started = Instant::now();
    let drift =
        shiftwork_contracts::fingerprint::verify(&OsFs, dir.path().to_str().unwrap(), &[wrong], &anywhere)
            .unwrap();
    assert_eq!(drift.len(), 1);
    println!(
        "fingerprint throughput: fingerprint {fp:.0} MB/s, verify {vf:.0} MB/s of a {} MiB file (target >= 500 MB/s; SHA instructions: {}); SIZE_MISMATCH in {:?} without reading",
        size >> 20,
        if sha_accelerated() {
            "yes, judged"
        } else {
            "no, reported only"
        },
        started.elapsed()
    );
}

fn figures() {
    println!(
        "contracts benchmarks on {} (quick factor {})",
        common::cpu_model(),
        common::quick()
    );
    for (threads, sync) in [
        (1, Synchronous::Normal),
        (8, Synchronous::Normal),
        (1, Synchronous::Full),
    ] {
        let rate = in_process(threads, sync);
        let target = if threads == 1 && sync == Synchronous::Normal {
            " (target >= 2,000)"
        } else {
            " (reported, no target)"
        };
        println!(
            "in-process claims: {rate:.0} claims/s, {threads} thread(s), synchronous {}{target}",
            sync_name(sync)
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("contended.db");
    contended(
        &path.display().to_string(),
        open(&path, Synchronous::Normal, 1),
        "SQLite, synchronous NORMAL",
        &[],
    );
    postgres_figure();
    sweep_figure();
    fingerprint_figure();
}

#[cfg(feature = "postgres")]
fn postgres_figure() {
    let Some((url, schema, store)) = common::postgres_store("contended claims, PostgreSQL", "bench") else {
        return;
    };
    contended(
        &url,
        store.clone(),
        "PostgreSQL",
        &[("SHIFTWORK_BENCH_PG_SCHEMA", schema)],
    );
    store.drop_schema().unwrap();
}

#[cfg(not(feature = "postgres"))]
fn postgres_figure() {
    println!("contended claims, PostgreSQL: not built (enable the benches' postgres feature)");
}

// ----- divan: per-operation costs -----

/// One full poll (transaction, sweep, claim, empty verification, reply) on a file, queue kept full.
#[divan::bench(sample_count = 200)]
fn poll_claim_sqlite(bencher: Bencher<'_, '_>) {
    let dir = tempfile::tempdir().unwrap();
    let fs = workspace();
    let c = facade(open(&dir.path().join("c.db"), Synchronous::Normal, 1), &fs);
    fill(&c, 2000, &["bob"]);
    bencher.bench_local(|| {
        if c.poll_next_task(&who("bob")).unwrap().held().is_none() {
            fill(&c, 2000, &["bob"]);
        }
    });
}

/// The pure core: one extend judged by `transition::apply`.
#[divan::bench]
fn transition_extend() -> shiftwork_contracts::transition::Step {
    let c = shiftwork_contracts::testing::sample_contract(0);
    let bob = shiftwork_contracts::AgentId::new("bob").unwrap();
    let claimed = shiftwork_contracts::transition::claim(&c, &bob, 1000).unwrap();
    shiftwork_contracts::transition::apply(
        divan::black_box(&claimed),
        &shiftwork_contracts::transition::Command::Extend {
            holder: shiftwork_contracts::transition::Holder {
                agent_id: bob,
                claim_epoch: Some(1),
            },
        },
        2000,
        &shiftwork_contracts::transition::Policy::default(),
    )
}

/// Fingerprint of a 4 MiB page-cached file.
#[divan::bench(sample_count = 50)]
fn fingerprint_4mib(bencher: Bencher<'_, '_>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    std::fs::write(&path, vec![b'x'; 4 << 20]).unwrap();
    bencher
        .counter(BytesCount::new(4usize << 20))
        .bench_local(|| shiftwork_contracts::fingerprint::fingerprint(&OsFs, &path, "f.bin").unwrap());
}
