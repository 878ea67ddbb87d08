//! A claim costs the same however much history the store holds: the time of a claim (a poll that
//! claims) and of a fulfil with 1,000,000 finished contracts in the store, against an empty store,
//! on SQLite and on PostgreSQL (target: within 1.5×). The finished contracts are `COMPLETED` ones
//! of the very agent that claims (the worst case for its indexes): on SQLite written through the
//! store's own insert, on PostgreSQL copied by one `INSERT … SELECT` from a contract the bench
//! completed.
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
        "claims with {history} finished contracts in the store vs an empty store, on {} (median of {TIMED} each)",
        common::cpu_model()
    );
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("history.db"));
    figure(
        "SQLite, synchronous NORMAL",
        &store,
        history,
        |store, template, n| fill_through_store(store, template, n),
    );
    drop(store);
    match std::env::var("SHIFTWORK_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("SHIFTWORK_TEST_POSTGRES_URL"))
    {
        Ok(url) => {
            let schema = format!("history_{}", std::process::id());
            let options = PgOptions {
                schema: Some(schema.clone()),
                ..PgOptions::default()
            };
            let pg = Arc::new(PgStore::connect(&url, options).unwrap());
            let store: Arc<dyn Store> = pg.clone();
            figure("PostgreSQL", &store, history, |_, template, n| {
                fill_postgres(&url, &schema, template, n)
            });
            pg.drop_schema().unwrap();
        }
        Err(_) => {
            println!("PostgreSQL: skipped (no SHIFTWORK_BENCH_POSTGRES_URL or SHIFTWORK_TEST_POSTGRES_URL)")
        }
    }
}

/// Times claims and fulfils on the empty store, fills it with `history` finished contracts, and
/// times them again.
fn figure(label: &str, store: &Arc<dyn Store>, history: usize, fill: impl Fn(&dyn Store, &Contract, usize)) {
    let (claim_empty, fulfil_empty) = timed(store, TIMED);
    let template = template(store);
    let started = Instant::now();
    fill(store.as_ref(), &template, history);
    let filled = started.elapsed();
    let (claim_full, fulfil_full) = timed(store, TIMED);
    let ratio = |full: Duration, empty: Duration| full.as_secs_f64() / empty.as_secs_f64();
    println!(
        "{label}: claim {claim_empty:.2?} empty, {claim_full:.2?} with {history} finished ({:.2}×, target ≤ 1.5×); fulfil {fulfil_empty:.2?} / {fulfil_full:.2?} ({:.2}×); history written in {filled:.1?}",
        ratio(claim_full, claim_empty),
        ratio(fulfil_full, fulfil_empty),
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
