//! A team on one server over HTTP.
//!
//! - **64 agents, poll → fulfill.** The release `shiftwork-mcp serve --http` (one server, then two
//!   replicas on one store) with a token file of 65 agents; a boss fills the queue through the server
//!   (`dispatch_contract`), then 64 client threads — one agent each, one kept-alive connection each —
//!   poll and fulfil until their queues are empty. The figure is claim+fulfill pairs per second, with
//!   p50/p99 of one pair and the check that no contract was claimed twice. On SQLite, and on PostgreSQL
//!   when `SHIFTWORK_TEST_POSTGRES_URL` is set.
//! - **What a token costs.** The round trip of an authenticated trivial call over HTTP, and the token
//!   check alone (`TokenFile::agent`: a stat, a SHA-256 and a lookup; target under 10 µs).
//!
//! `cargo bench -p benches --bench http_serve`; `SHIFTWORK_BENCH_QUICK=1` shrinks the workload tenfold.
//! A test run (`cargo test --all-targets`) drives the debug binary over a few contracts as a smoke test.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use common::http::{Client, Server, token_file};
use serde_json::json;

fn main() {
    let benching = common::benching();
    let (agents, per_agent) = if benching {
        (64, 125 / common::quick().max(1))
    } else {
        (4, 3)
    };
    token_check(if benching { 200_000 } else { 100 });
    trivial_call(if benching { 3_000 / common::quick() } else { 10 });
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("contracts.db").display().to_string();
    for replicas in [1, 2] {
        pairs(
            &format!("SQLite, {replicas} server(s)"),
            &sqlite,
            replicas,
            agents,
            per_agent,
            dir.path(),
        );
    }
    match std::env::var("SHIFTWORK_TEST_POSTGRES_URL") {
        Ok(url) if cfg!(feature = "postgres") => {
            for replicas in [1, 2] {
                let url = fresh_database(&url, &format!("http_bench_{}_{replicas}", std::process::id()));
                pairs(
                    &format!("PostgreSQL, {replicas} replica(s)"),
                    &url,
                    replicas,
                    agents,
                    per_agent,
                    dir.path(),
                );
            }
        }
        _ => println!("PostgreSQL: skipped (SHIFTWORK_TEST_POSTGRES_URL is not set, or no postgres feature)"),
    }
}

/// A new, empty database `name` on the server of `url`: its URL.
#[cfg(feature = "postgres")]
fn fresh_database(url: &str, name: &str) -> String {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    // One statement a call: two in one batch run as one transaction, where DROP DATABASE may not.
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    // The database is the URL's path after the authority: postgresql://user@host/<db>?…
    let (head, query) = url.split_once('?').map_or((url, None), |(h, q)| (h, Some(q)));
    let base = match head.rfind('/') {
        Some(at) if at > head.find("://").map_or(0, |p| p + 2) => &head[..at],
        _ => head,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

#[cfg(not(feature = "postgres"))]
fn fresh_database(url: &str, _name: &str) -> String {
    url.to_owned()
}

/// What one client saw: the (contract, epoch) pairs it claimed and the time of each pair (µs).
type Seen = (Vec<(String, u64)>, Vec<u64>);

fn agent(i: usize) -> String {
    format!("agent{i:02}")
}

/// A token file with `agents` agents and the boss: the file and the tokens (the boss's last).
fn tokens(dir: &Path, agents: usize) -> (std::path::PathBuf, Vec<String>) {
    let file = dir.join(format!("tokens-{agents}"));
    let tokens = token_file(&file, (0..agents).map(agent).chain([String::from("boss")]));
    (file, tokens)
}

/// A server of the contracts and hours tools on the store `db`, workspace roots under `roots`.
fn serve(db: &str, tokens: &Path, roots: &Path) -> Server {
    Server::start(
        &[
            "--tools",
            "contracts,hours",
            "--auth-tokens",
            tokens.to_str().unwrap(),
            "--contracts-db",
            db,
        ],
        &[("SHIFTWORK_CONTRACTS_ROOTS", roots)],
        None,
    )
}

fn pairs(label: &str, db: &str, replicas: usize, agents: usize, per_agent: usize, dir: &Path) {
    let roots = tempfile::tempdir_in(dir).unwrap();
    let (file, tokens) = tokens(dir, agents);
    let servers: Vec<Server> = (0..replicas).map(|_| serve(db, &file, roots.path())).collect();
    let mut boss = Client::new(&servers[0].base, &tokens[agents]);
    for n in 0..per_agent {
        for a in 0..agents {
            let sent = boss.call(
                "dispatch_contract",
                json!({"target_agent": agent(a), "title": format!("job {n}"), "context_summary": "bench",
                       "workspace_root": roots.path().to_str().unwrap()}),
            );
            assert_eq!(sent["ok"], true, "{sent}");
        }
    }
    let barrier = Arc::new(Barrier::new(agents + 1));
    let clients: Vec<_> = (0..agents)
        .map(|a| {
            let base = servers[a % replicas].base.clone();
            let token = tokens[a].clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut client = Client::new(&base, &token);
                client.request("ping", json!({}));
                barrier.wait();
                let mut claims = Vec::new();
                let mut pairs_us = Vec::new();
                loop {
                    let started = Instant::now();
                    let polled = client.call("poll_next_task", json!({}));
                    if polled["ok"] != true {
                        assert_eq!(polled["error"]["code"], "STORE_BUSY", "{polled}");
                        continue;
                    }
                    if polled["has_task"] != true {
                        return (claims, pairs_us);
                    }
                    let id = polled["contract"]["contract_id"].as_str().unwrap().to_owned();
                    let epoch = polled["contract"]["claim_epoch"].as_u64().unwrap();
                    loop {
                        let done = client.call(
                            "fulfill_contract",
                            json!({"contract_id": id, "claim_epoch": epoch, "result_summary": "done"}),
                        );
                        if done["ok"] == true {
                            break;
                        }
                        assert_eq!(done["error"]["code"], "STORE_BUSY", "{done}");
                    }
                    pairs_us.push(started.elapsed().as_micros() as u64);
                    claims.push((id, epoch));
                }
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let seen: Vec<Seen> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let elapsed = started.elapsed();
    let mut unique = HashSet::new();
    let mut latency: Vec<u64> = Vec::new();
    for (claims, pairs_us) in &seen {
        for claim in claims {
            assert!(unique.insert(claim.clone()), "{label}: double claim {claim:?}");
        }
        latency.extend(pairs_us);
    }
    let total = agents * per_agent;
    assert_eq!(
        unique.len(),
        total,
        "{label}: every contract claimed exactly once"
    );
    latency.sort_unstable();
    let pct = |q: f64| latency[((latency.len() as f64 - 1.0) * q) as usize];
    println!(
        "{label}: {:.0} claim+fulfill pairs/s, {agents} agents over HTTP, {total} contracts in {:.2} s, 0 double claims, pair p50 {} µs, p99 {} µs",
        total as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
    );
}

/// The round trip of an authenticated trivial call over HTTP.
fn trivial_call(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (file, tokens) = tokens(dir.path(), 1);
    let db = dir.path().join("c.db").display().to_string();
    let server = serve(&db, &file, dir.path());
    let mut client = Client::new(&server.base, &tokens[0]);
    let mut samples = Vec::new();
    for i in 0..n + n / 10 {
        let started = Instant::now();
        let answer = client.call(
            "hours_check",
            json!({"expression": "Mon-Fri 09:00-17:00", "at": "2026-12-04T10:00:00Z"}),
        );
        let took = started.elapsed();
        assert_eq!(answer["result"], "hours");
        if i >= n / 10 {
            samples.push(took);
        }
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e6;
    println!(
        "an authenticated trivial call over HTTP (hours_check, kept-alive connection): median {:.1} µs, p95 {:.1} µs",
        at(0.5),
        at(0.95)
    );
}

/// The token check alone.
fn token_check(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (file, tokens) = tokens(dir.path(), 64);
    let tokens_file = shiftwork_mcp::tokens::TokenFile::open(&file).unwrap();
    let token = &tokens[17];
    assert_eq!(tokens_file.agent(token).as_deref(), Some("agent17"));
    let started = Instant::now();
    for _ in 0..n {
        std::hint::black_box(tokens_file.agent(std::hint::black_box(token)));
    }
    let per = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!(
        "the token check (stat, SHA-256, lookup; 65 tokens in the file): {per:.2} µs a request (target under 10 µs)"
    );
}
