//! A claim costs the same however much history the store holds: the time of a claim (a poll that
//! claims) and of a fulfil with 1,000,000 finished contracts in the store, against an empty store,
//! on SQLite and on PostgreSQL (target: within 1.5×). The finished contracts are `COMPLETED` ones
//! of the very agent that claims (the worst case for its indexes): on SQLite written through the
//! store's own insert, on PostgreSQL copied by one `INSERT … SELECT` from a contract the bench
//! completed. The two stores are timed in alternating rounds, so a change of the machine's load
//! hits both.
//!
//! `cargo bench -p benches --bench contracts_history`; the PostgreSQL half needs
//! `SHIFTWORK_BENCH_POSTGRES_URL` (or `SHIFTWORK_TEST_POSTGRES_URL`). `SHIFTWORK_BENCH_QUICK=1` keeps
//! 100,000 finished contracts instead. A test run claims a few contracts over a small history.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shiftwork_contracts::ids::contract_id_from_bits;
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{
    AgentId, Contract, Contracts, ContractsConfig, DispatchRequest, FulfillRequest, PgOptions, PgStore,
    SqliteOptions, SqliteStore, Status, Store,
};
use shiftwork_seams::{MemFs, OsFs, SystemClock};

/// Claims (and fulfils) timed per store state.
const TIMED: usize = 2_000;

fn main() {
    if !common::benching() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite(&dir.path().join("smoke.db"));
        fill_through_store(store.as_ref(), &template(&store), 50);
        let (claim, fulfil) = timed(&store, 5);
        assert!(claim > Duration::ZERO && fulfil > Duration::ZERO);
        return;
    }
    let history = 1_000_000 / common::quick();
    println!(
        "claims with {history} finished contracts in the store vs an empty store, on {} ({TIMED} claims of each, in alternating rounds)",
        common::cpu_model()
    );
    let dir = tempfile::tempdir().unwrap();
    let (empty, full) = (
        sqlite(&dir.path().join("empty.db")),
        sqlite(&dir.path().join("history.db")),
    );
    figure(
        "SQLite, synchronous NORMAL",
        [&empty, &full],
        history,
        |store, template, n| fill_through_store(store, template, n),
    );
    drop((empty, full));
    match std::env::var("SHIFTWORK_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("SHIFTWORK_TEST_POSTGRES_URL"))
    {
        Ok(url) => {
            let connect = |schema: &str| {
                let options = PgOptions {
                    schema: Some(schema.to_owned()),
                    ..PgOptions::default()
                };
                Arc::new(PgStore::connect(&url, options).unwrap())
            };
            let (empty_schema, full_schema) = (
                format!("history_empty_{}", std::process::id()),
                format!("history_{}", std::process::id()),
            );
            let (empty_pg, full_pg) = (connect(&empty_schema), connect(&full_schema));
            let (empty, full): (Arc<dyn Store>, Arc<dyn Store>) = (empty_pg.clone(), full_pg.clone());
            figure("PostgreSQL", [&empty, &full], history, |_, template, n| {
                fill_postgres(&url, &full_schema, template, n)
            });
            empty_pg.drop_schema().unwrap();
            full_pg.drop_schema().unwrap();
        }
        Err(_) => {
            println!("PostgreSQL: skipped (no SHIFTWORK_BENCH_POSTGRES_URL or SHIFTWORK_TEST_POSTGRES_URL)")
        }
    }
}

/// Fills the second store with `history` finished contracts, then times claims and fulfils on the
/// empty store and on the full one in alternating rounds (so a change of the machine's load hits
/// both), and prints the medians and the median of the rounds' ratios.
fn figure(
    label: &str,
    [empty, full]: [&Arc<dyn Store>; 2],
    history: usize,
    fill: impl Fn(&dyn Store, &Contract, usize),
) {
    const ROUNDS: usize = 5;
    let template = template(full);
    let started = Instant::now();
    fill(full.as_ref(), &template, history);
    let filled = started.elapsed();
    // A warm-up of each, untimed.
    timed(empty, TIMED / ROUNDS / 4);
    timed(full, TIMED / ROUNDS / 4);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let on_empty = timed(empty, TIMED / ROUNDS);
        let on_full = timed(full, TIMED / ROUNDS);
        rounds.push((on_empty, on_full));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let claim_empty = median(rounds.iter().map(|((c, _), _)| micros(*c)).collect());
    let claim_full = median(rounds.iter().map(|(_, (c, _))| micros(*c)).collect());
    let fulfil_empty = median(rounds.iter().map(|((_, f), _)| micros(*f)).collect());
    let fulfil_full = median(rounds.iter().map(|(_, (_, f))| micros(*f)).collect());
    let claim_ratio = median(
        rounds
            .iter()
            .map(|((e, _), (f, _))| micros(*f) / micros(*e))
            .collect(),
    );
    let fulfil_ratio = median(
        rounds
            .iter()
            .map(|((_, e), (_, f))| micros(*f) / micros(*e))
            .collect(),
    );
    println!(
        "{label}: claim {claim_empty:.1}µs empty, {claim_full:.1}µs with {history} finished ({claim_ratio:.2}×, target ≤ 1.5×); fulfil {fulfil_empty:.1}µs / {fulfil_full:.1}µs ({fulfil_ratio:.2}×); medians of {ROUNDS} alternating rounds; history written in {filled:.1?}",
    );
}

fn sqlite(path: &Path) -> Arc<dyn Store> {
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

fn facade(store: &Arc<dyn Store>) -> Contracts {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new(["/w"]))
        .build()
        .unwrap();
    Contracts::builder(store.clone())
        .fs(Arc::new(fs))
        .real_ids()
        .config(config)
        .build()
}

fn who(name: &str) -> AgentId {
    AgentId::new(name).unwrap()
}

/// Dispatches `n` contracts to `worker`, then claims them one poll at a time and fulfils each; the
/// median claim and the median fulfil.
fn timed(store: &Arc<dyn Store>, n: usize) -> (Duration, Duration) {
    let c = facade(store);
    for i in 0..n {
        c.dispatch(&DispatchRequest::new(
            who("boss"),
            who("worker"),
            format!("job {i}"),
            "/w",
        ))
        .unwrap();
    }
    let (mut claims, mut fulfils) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        let polled = c.poll_next_task(&who("worker")).unwrap();
        claims.push(t.elapsed());
        let held = polled.held().expect("a contract waits");
        let t = Instant::now();
        c.fulfill_contract(&held.holder(), &FulfillRequest::new("done"))
            .unwrap();
        fulfils.push(t.elapsed());
    }
    claims.sort();
    fulfils.sort();
    (claims[n / 2], fulfils[n / 2])
}

/// A contract of `worker` the bench completed: the pattern of the history.
fn template(store: &Arc<dyn Store>) -> Contract {
    let c = facade(store);
    let sent = c
        .dispatch(&DispatchRequest::new(who("boss"), who("worker"), "history", "/w"))
        .unwrap();
    let held = c.poll_next_task(&who("worker")).unwrap();
    c.fulfill_contract(&held.held().unwrap().holder(), &FulfillRequest::new("done"))
        .unwrap();
    let done = store.get(&sent.contract_id).unwrap().unwrap();
    assert_eq!(done.status, Status::Completed);
    done
}

/// `n` copies of `template`, each finished, written through the store's insert.
fn fill_through_store(store: &dyn Store, template: &Contract, n: usize) {
    for i in 0..n {
        let mut bits = [0u8; 10];
        bits[2..10].copy_from_slice(&(i as u64).to_be_bytes());
        store
            .insert(&|now, seq| Contract {
                seq,
                contract_id: contract_id_from_bits(now, bits),
                completed_at: Some(now),
                ..template.clone()
            })
            .unwrap();
    }
}

/// `n` copies of `template`, each finished, in one `INSERT … SELECT` on PostgreSQL.
fn fill_postgres(url: &str, schema: &str, template: &Contract, n: usize) {
    const COLUMNS: &str = "requester_agent, target_agent, idempotency_key, payload_sha256, task_type, title, \
        context_summary, workspace_root, pointers, contract_schema, exec_ttl_sec, queue_ttl_sec, status, created_at, \
        queued_at, queue_expires_at, lifetime_ends_at, claimed_at, expires_at, completed_at, claim_epoch, extend_count, \
        release_count, retry_count, toctou_strikes, end_reason, dirty_files, error_reason, fail_reason, result_summary, \
        structured_output, artifacts_pointers, salvaged_result, max_deliveries, delivery_count, available_at, cancel_reason";
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "SET search_path = \"{schema}\";
             INSERT INTO contracts (contract_id, {COLUMNS})
             SELECT 'history-' || g, {COLUMNS} FROM contracts, generate_series(1, {n}) AS g
              WHERE contract_id = '{}';
             ANALYZE contracts;",
            template.contract_id
        ))
        .unwrap();
}
