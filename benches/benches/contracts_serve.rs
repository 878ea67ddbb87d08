//! Contracts under many agents through `serve`. 16 `shiftwork-mcp serve` processes (one agent
//! each, `--tools contracts`) share one store; each is driven by one client doing `poll_next_task`
//! → `fulfill_contract` until its queue is empty. The figure is claim+fulfill pairs per second from
//! the start barrier to the last client's end (targets: ≥ 1,500 on SQLite, ≥ 800 on PostgreSQL on a
//! 2-core machine), with p50/p99 of one pair and the check that no contract was claimed twice and
//! every one completed.
//!
//! `cargo bench -p benches --bench contracts_serve` runs the release binary (built when missing); with
//! `SHIFTWORK_TEST_POSTGRES_URL` set and the benches' `postgres` feature it also runs on PostgreSQL.
//! `SHIFTWORK_BENCH_QUICK=1` shrinks the workload tenfold. A test run (`cargo test --all-targets`) drives
//! two debug servers over a few contracts, as a smoke test.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::json;
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::store::ListQuery;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, SqliteOptions, SqliteStore, Status, Store,
};
use shiftwork_seams::{OsFs, SystemClock};

mod common;

use common::stdio::StdioServer;

fn main() {
    if let Ok(role) = std::env::var("SHIFTWORK_BENCH_PAIRS") {
        library_worker(&role);
        return;
    }
    if common::benching() {
        figures();
    } else {
        smoke();
    }
    divan::main();
}

/// One `serve` process (one agent, the contracts group) and its client end.
fn serve(db: &str, agent: &str, roots: &Path, extra_env: &[(&str, String)]) -> StdioServer {
    let mut cmd = Command::new(common::server_binary());
    cmd.args(["serve", "--tools", "contracts", "--contracts-db", db])
        .env("AGENT_NAME", agent)
        .env("SHIFTWORK_CONTRACTS_ROOTS", roots);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    StdioServer::start(&mut cmd)
}

/// What one client saw: the (contract, epoch) pairs it claimed and the time of each pair (µs).
struct Seen {
    claims: Vec<(String, u64)>,
    pairs_us: Vec<u64>,
}

/// Drives `server` until its queue is empty: poll, then fulfil what it got.
fn drive(server: &mut StdioServer) -> Seen {
    let mut seen = Seen {
        claims: Vec::new(),
        pairs_us: Vec::new(),
    };
    loop {
        let started = Instant::now();
        let polled = server.call("poll_next_task", json!({}));
        if polled["ok"] != true {
            assert_eq!(polled["error"]["code"], "STORE_BUSY", "{polled}");
            continue;
        }
        if polled["has_task"] != true {
            return seen;
        }
        let c = &polled["contract"];
        let id = c["contract_id"].as_str().unwrap().to_owned();
        let epoch = c["claim_epoch"].as_u64().unwrap();
        loop {
            let done = server.call(
                "fulfill_contract",
                json!({"contract_id": id, "claim_epoch": epoch, "result_summary": "done"}),
            );
            if done["ok"] == true {
                break;
            }
            assert_eq!(done["error"]["code"], "STORE_BUSY", "{done}");
        }
        seen.pairs_us.push(started.elapsed().as_micros() as u64);
        seen.claims.push((id, epoch));
    }
}

fn agent(i: usize) -> String {
    format!("agent{i:02}")
}

/// The library over `store`, workspace roots in `roots`.
fn library(store: Arc<dyn Store>, roots: &Path) -> Contracts {
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new([roots]))
        .build()
        .unwrap();
    Contracts::builder(store)
        .config(config)
        .real_fs()
        .real_ids()
        .build()
}

/// Dispatches `per_agent` contracts to each of `agents` agents into `store`, without pointers.
fn fill(store: Arc<dyn Store>, roots: &Path, agents: usize, per_agent: usize) {
    let c = library(store, roots);
    let boss = AgentId::new("boss").unwrap();
    for n in 0..per_agent {
        for a in 0..agents {
            c.dispatch(&DispatchRequest::new(
                boss.clone(),
                AgentId::new(agent(a)).unwrap(),
                format!("job {n}"),
                roots.display().to_string(),
            ))
            .unwrap();
        }
    }
}

/// The run: `agents` servers over `store` (at `db`), `per_agent` contracts each. Prints the figure.
fn run(
    label: &str,
    db: &str,
    store: Arc<dyn Store>,
    agents: usize,
    per_agent: usize,
    extra_env: &[(&str, String)],
    target: &str,
) {
    let roots = tempfile::tempdir().unwrap();
    fill(store.clone(), roots.path(), agents, per_agent);
    let servers: Vec<StdioServer> = (0..agents)
        .map(|a| serve(db, &agent(a), roots.path(), extra_env))
        .collect();
    let barrier = Arc::new(Barrier::new(agents + 1));
    let clients: Vec<_> = servers
        .into_iter()
        .map(|mut s| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                // Warm the connection and the store outside the measured time.
                s.call("inspect_mesh_state", json!({"limit": 1}));
                barrier.wait();
                let seen = drive(&mut s);
                s.stop();
                seen
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let seen: Vec<Seen> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let elapsed = started.elapsed();
    let total = agents * per_agent;
    let mut pairs = HashSet::new();
    let mut lat: Vec<u64> = Vec::new();
    for s in &seen {
        for claim in &s.claims {
            assert!(pairs.insert(claim.clone()), "{label}: double claim {claim:?}");
        }
        lat.extend(&s.pairs_us);
    }
    assert_eq!(pairs.len(), total, "{label}: every contract claimed exactly once");
    let counts = store.list(&ListQuery::default(), 0).unwrap().counts;
    assert_eq!(
        counts.completed as usize, total,
        "{label}: every contract completed"
    );
    assert!(store.check_integrity().unwrap().is_clean());
    let records = store
        .list(
            &ListQuery {
                limit: 5,
                statuses: Some(vec![Status::Completed]),
                ..ListQuery::default()
            },
            0,
        )
        .unwrap();
    assert!(records.records.iter().all(|r| r.claim_epoch == 1));
    lat.sort_unstable();
    let pct = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize];
    println!(
        "contracts through serve, {label}: {:.0} claim+fulfill pairs/s through {agents} serve processes (target {target}), {total} contracts in {:.2} s, 0 double claims, pair p50 {} us, p99 {} us",
        total as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
    );
}

/// A library worker process (the store's share of the figure, no MCP): waits for the start file, then
/// polls and fulfills as its agent until the queue is empty; prints its pair count.
fn library_worker(role: &str) {
    let mut parts = role.split('|');
    let (db, name, go) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let store = sqlite_store(Path::new(db));
    let roots = Path::new(parts.next().unwrap());
    let c = library(store, roots);
    let me = AgentId::new(name).unwrap();
    while !Path::new(go).exists() {
        std::thread::sleep(Duration::from_micros(200));
    }
    let mut pairs = 0;
    loop {
        let polled = match c.poll_next_task(&me) {
            Ok(p) => p,
            Err(r) if r.code() == shiftwork_contracts::RefusalCode::StoreBusy => continue,
            Err(r) => panic!("{r}"),
        };
        let Some(h) = polled.held() else { break };
        let holder = h.holder();
        let delivery = shiftwork_contracts::FulfillRequest::new("done");
        while let Err(r) = c.fulfill_contract(&holder, &delivery) {
            assert_eq!(r.code(), shiftwork_contracts::RefusalCode::StoreBusy, "{r}");
        }
        pairs += 1;
    }
    println!("{pairs}");
}

/// The same work without MCP: `procs` processes using the library directly on one SQLite file.
fn library_figure(procs: usize, per_agent: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("library.db");
    let roots = tempfile::tempdir().unwrap();
    fill(sqlite_store(&path), roots.path(), procs, per_agent);
    let go = dir.path().join("go");
    let children: Vec<Child> = (0..procs)
        .map(|a| {
            Command::new(std::env::current_exe().unwrap())
                .env(
                    "SHIFTWORK_BENCH_PAIRS",
                    format!(
                        "{}|{}|{}|{}",
                        path.display(),
                        agent(a),
                        go.display(),
                        roots.path().display()
                    ),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    std::fs::write(&go, b"go").unwrap();
    let total: usize = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(total, procs * per_agent);
    println!(
        "contracts through serve, SQLite without MCP (the store's share): {:.0} claim+fulfill pairs/s across {procs} library process(es), {total} contracts in {:.2} s",
        total as f64 / started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

fn sqlite_store(path: &Path) -> Arc<dyn Store> {
    Arc::new(
        SqliteStore::open(
            path,
            SqliteOptions::default(),
            Arc::new(SystemClock::new()),
            &OsFs,
        )
        .unwrap(),
    )
}

fn figures() {
    // `SHIFTWORK_BENCH_ONLY=library` runs the single-process library figure alone (for a profile).
    if std::env::var("SHIFTWORK_BENCH_ONLY").is_ok_and(|v| v == "library") {
        library_figure(1, 8000 / common::quick());
        return;
    }
    if std::env::var("SHIFTWORK_BENCH_ONLY").is_ok_and(|v| v == "library16") {
        library_figure(16, 500 / common::quick());
        return;
    }
    println!(
        "contracts through serve on {} ({} CPUs), quick factor {}",
        common::cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        common::quick()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("serve.db");
    run(
        "SQLite, synchronous NORMAL",
        &path.display().to_string(),
        sqlite_store(&path),
        16,
        500 / common::quick(),
        &[],
        ">= 1,500",
    );
    library_figure(16, 500 / common::quick());
    library_figure(1, 8000 / common::quick());
    postgres();
}

#[cfg(feature = "postgres")]
fn postgres() {
    let Some((url, schema, store)) =
        common::postgres_store("contracts through serve, PostgreSQL", "serve_bench")
    else {
        return;
    };
    let sep = if url.contains('?') { '&' } else { '?' };
    let db = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    run(
        "PostgreSQL",
        &db,
        store.clone(),
        16,
        500 / common::quick(),
        &[],
        ">= 800",
    );
    store.drop_schema().unwrap();
}

#[cfg(not(feature = "postgres"))]
fn postgres() {
    println!("contracts through serve, PostgreSQL: not built (enable the benches' postgres feature)");
}

/// A test run: two debug servers over a few contracts, everything checked, nothing judged.
fn smoke() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smoke.db");
    run(
        "smoke",
        &path.display().to_string(),
        sqlite_store(&path),
        2,
        5,
        &[],
        "none",
    );
}

/// One round trip of `poll_next_task` on an empty queue through one release server (the per-call
/// floor of this path).
#[divan::bench(sample_count = 100)]
fn poll_round_trip_empty(bencher: divan::Bencher<'_, '_>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rt.db").display().to_string();
    let mut server = serve(&db, "solo", dir.path(), &[]);
    server.call("poll_next_task", json!({}));
    bencher.bench_local(|| server.call("poll_next_task", json!({})));
    server.stop();
    let _ = Duration::ZERO;
}
